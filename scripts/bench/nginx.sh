# shellcheck shell=bash
# nginx.sh - the loopback nginx the benchmark capture generators record (sourced).
#
#   . scripts/bench/nginx.sh
#   bench_nginx_start PREFIX "server { listen 127.0.0.1:$port http2; root \$root; }" ...
#
# Makes a work folder ($work) with the content every mix asks for (tiny.txt 64 B,
# small.txt ~1 KB, page.html ~8 KB, app.js ~32 KB, random base64), writes nginx.conf
# with the given server blocks ("$root" inside them is the content folder, "$work" the
# work folder, e.g. for TLS certificates made before the call), starts nginx, and on
# exit kills nginx and the capture in $td (if set) and removes the folder.
bench_nginx_work() { # PREFIX: create $work with the content
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    mkdir -p "$work/www" "$work/logs"
    chmod 755 "$work" "$work/www" # nginx workers run as nobody
    head -c 48 /dev/urandom | base64 >"$work/www/tiny.txt"
    head -c 700 /dev/urandom | base64 >"$work/www/small.txt"
    head -c 6000 /dev/urandom | base64 >"$work/www/page.html"
    head -c 24000 /dev/urandom | base64 >"$work/www/app.js"
    chmod 644 "$work"/www/*
    td=
    trap bench_nginx_cleanup EXIT
}

bench_nginx_cleanup() {
    [ -n "${td:-}" ] && kill "$td" 2>/dev/null || true
    bench_lo_restore
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}

bench_nginx_start() { # SERVER_BLOCK...: after bench_nginx_work
    local root=$work/www block
    {
        echo "worker_processes 1;"
        echo "pid $work/nginx.pid;"
        echo "error_log $work/logs/error.log;"
        echo "events { worker_connections 1024; }"
        echo "http {"
        echo "    access_log off;"
        echo "    keepalive_requests 100000;"
        for block in "$@"; do echo "    ${block//\$root/$root}"; done
        echo "}"
    } >"$work/nginx.conf"
    nginx -c "$work/nginx.conf" -p "$work"
    sleep 0.5
}

# Give lo an Ethernet-sized MTU with TSO and GSO off until bench_lo_restore (called by
# bench_nginx_cleanup), so that a capture on lo holds wire-sized segments.
bench_lo_mtu() { # MTU
    lo_mtu=$(cat /sys/class/net/lo/mtu)
    lo_tso=$(ethtool -k lo | awk '$1 == "tcp-segmentation-offload:" {print $2}')
    lo_gso=$(ethtool -k lo | awk '$1 == "generic-segmentation-offload:" {print $2}')
    ip link set lo mtu "$1"
    ethtool -K lo tso off gso off
}

bench_lo_restore() {
    [ -n "${lo_mtu:-}" ] || return 0
    ip link set lo mtu "$lo_mtu"
    ethtool -K lo tso "$lo_tso" gso "$lo_gso"
    lo_mtu=
}
