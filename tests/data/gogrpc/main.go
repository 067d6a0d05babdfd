// A Go gRPC server and its client for the goroutine attribution tests
// (tests/spantrace/t_sockets_grpc.sh), built with Debian's grpc-go (golang-google-grpc-dev).
//
//	gogrpc serve                 unary /spanfold.Work/Burn on 127.0.0.1 (a free port, printed
//	                             as "listening on 127.0.0.1:PORT"): burn(N) rounds of SHA-256,
//	                             sleeping 1 ms after every 5,000, answering with the digest
//	gogrpc call ADDR CALLS PAR   CALLS calls over one HTTP/2 connection, PAR in flight; call i
//	                             (from 1) carries traceparent 00-4bf9…-%016x(i)-01 and asks
//	                             for 100,000 rounds when i % 4 == 1, else for 1
//
// grpc-go reads a connection's frames on one goroutine and starts a new goroutine for each
// stream it opens, which runs the handler; another goroutine writes the answers.  No
// goroutine both reads a request and writes its response, and the one that does the work
// touches no socket.  No .proto compilation: the service is described by hand and its
// messages are protobuf's well-known wrappers.
package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/golang/protobuf/ptypes/wrappers"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

//go:noinline
func burn(n int) [32]byte {
	d := sha256.Sum256([]byte("spanfold"))
	for i := 0; i < n; i++ {
		d = sha256.Sum256(d[:])
		if i%5000 == 4999 {
			time.Sleep(time.Millisecond) // the goroutine parks; it resumes on any thread
		}
	}
	return d
}

func burnHandler(srv interface{}, ctx context.Context, dec func(interface{}) error,
	_ grpc.UnaryServerInterceptor) (interface{}, error) {
	in := new(wrappers.Int64Value)
	if err := dec(in); err != nil {
		return nil, err
	}
	d := burn(int(in.Value))
	return &wrappers.BytesValue{Value: d[:]}, nil
}

var workService = grpc.ServiceDesc{
	ServiceName: "spanfold.Work",
	HandlerType: (*interface{})(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "Burn", Handler: burnHandler}},
	Metadata:    "work.proto",
}

func serve() error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s := grpc.NewServer()
	s.RegisterService(&workService, struct{}{})
	fmt.Printf("listening on %s\n", l.Addr())
	os.Stdout.Sync()
	return s.Serve(l)
}

func call(addr string, calls, par int) error {
	conn, err := grpc.Dial(addr, grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		return err
	}
	defer conn.Close()
	next := make(chan int)
	errs := make(chan error, calls)
	var wg sync.WaitGroup
	for w := 0; w < par; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n := int64(1)
				if i%4 == 1 {
					n = 100000
				}
				ctx := metadata.AppendToOutgoingContext(context.Background(), "traceparent",
					fmt.Sprintf("00-4bf92f3577b34da6a3ce929d0e0e4736-%016x-01", i))
				out := new(wrappers.BytesValue)
				if err := conn.Invoke(ctx, "/spanfold.Work/Burn", &wrappers.Int64Value{Value: n}, out); err != nil {
					errs <- fmt.Errorf("call %d: %v", i, err)
				}
			}
		}()
	}
	for i := 1; i <= calls; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	return <-errs
}

func main() {
	var err error
	switch {
	case len(os.Args) == 2 && os.Args[1] == "serve":
		err = serve()
	case len(os.Args) == 5 && os.Args[1] == "call":
		calls, e1 := strconv.Atoi(os.Args[3])
		par, e2 := strconv.Atoi(os.Args[4])
		if e1 != nil || e2 != nil || calls < 1 || par < 1 {
			err = fmt.Errorf("call ADDR CALLS PAR: numbers expected")
		} else {
			err = call(os.Args[2], calls, par)
		}
	default:
		err = fmt.Errorf("usage: gogrpc serve | gogrpc call ADDR CALLS PAR")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gogrpc:", err)
		os.Exit(1)
	}
}
