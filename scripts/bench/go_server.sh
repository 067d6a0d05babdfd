# shellcheck shell=bash
# go_server.sh - the Go test servers of tests/data (goserver: net/http; gogrpc: grpc-go),
# built and started for the live tests (tests/spantrace/t_sockets_go.sh, t_sockets_grpc.sh)
# and scripts/bench-sockets.sh.  Sourced; needs $top.
#
# go_server_build NAME DIR: tests/data/NAME/main.go built as DIR/NAME with Debian's Go in
#   GOPATH mode over its source packages (/usr/share/gocode, where golang-google-grpc-dev
#   puts grpc-go; no module download); the compiler's messages in DIR/build.err.
# go_server_start DIR/NAME [ARGS]: runs it with GOMAXPROCS=2, its output in DIR/svc.out;
#   sets svc (its pid) and port (the one it printed, "listening on 127.0.0.1:PORT"); fails
#   when it printed none within 5 s.
go_server_build() {
    mkdir -p "$2/go/src/$1" && cp "$top/tests/data/$1/main.go" "$2/go/src/$1/" &&
        (cd "$2/go/src/$1" && GO111MODULE=off GOPATH="$2/go:/usr/share/gocode" \
            GOCACHE="$2/gocache" go build -o "$2/$1" .) >"$2/build.err" 2>&1
}

go_server_start() {
    local dir
    dir=$(dirname "$1")
    GOMAXPROCS=2 "$@" >"$dir/svc.out" 2>&1 &
    svc=$!
    for _ in $(seq 50); do grep -q listening "$dir/svc.out" && break; sleep 0.1; done
    port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$dir/svc.out")
    [ -n "$port" ]
}
