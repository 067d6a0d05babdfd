// A Go HTTP/1.1 server for the goroutine attribution tests (tests/spantrace/t_sockets_go.sh):
// GET /work?n=N burns N rounds of SHA-256 in burn() (the expensive requests ask for many,
// the cheap ones for one), sleeping 1 ms after every 5,000, and answers with the digest;
// every request runs on a goroutine of net/http, on whatever thread is free, and moves
// between threads at each sleep.  Prints "listening on 127.0.0.1:PORT".
package main

import (
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

//go:noinline
func burn(n int) [32]byte {
	d := sha256.Sum256([]byte("spanfold"))
	for i := 0; i < n; i++ {
		d = sha256.Sum256(d[:])
		if i%5000 == 4999 {
			// a wait between chunks (a lock, a call): the goroutine parks, and
			// resumes on whichever thread is free
			time.Sleep(time.Millisecond)
		}
	}
	return d
}

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		d := burn(n)
		fmt.Fprintf(w, "%x\n", d)
	})
	fmt.Printf("listening on %s\n", l.Addr())
	os.Stdout.Sync()
	http.Serve(l, nil)
}
