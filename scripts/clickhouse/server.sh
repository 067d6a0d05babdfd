# scripts/clickhouse/server.sh: start ClickHouse servers as plain processes on loopback
# ports, for tests/spanfold/t_clickhouse.sh and scripts/bench-clickhouse.sh and
# scripts/bench-fleet.sh (source it).
# Never a system service: the data, logs and config live in the folder given.
#
#   ch_ports N              print N free loopback TCP ports
#   ch_server DIR HTTP TCP SHARD_TCP...
#                           write DIR/config.xml (remote_servers: cluster "sf", one shard
#                           per SHARD_TCP port; with ch_dead_port set, also cluster
#                           "sf_dead": those shards and one more on that port, where no
#                           server listens) and DIR/users.xml, start clickhouse-server
#                           in the background; its pid is appended to ch_pids
#   ch_up HTTP              wait (60 s at most) until the server on HTTP answers /ping
#   ch_two_shards DIR       two servers, shards 1 and 2 of cluster "sf" (DIR/s1, DIR/s2),
#                           their ports in ch_http1 ch_tcp1 ch_http2 ch_tcp2; fails when
#                           either does not answer
#   ch_stop                 stop every server ch_server started, by pid
#
# The config keeps to what ClickHouse 18.16 (Debian 12) reads; current releases read it too.
ch_pids=()

ch_ports() {
    python3 -c '
import socket, sys
ss = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in ss: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in ss])' "$1"
}

ch_server() {
    local dir=$1 http=$2 tcp=$3 shards="" p
    shift 3
    for p in "$@"; do
        shards="$shards<shard><replica><host>127.0.0.1</host><port>$p</port></replica></shard>"
    done
    local dead=""
    [ -n "${ch_dead_port:-}" ] &&
        dead="<sf_dead>$shards<shard><replica><host>127.0.0.1</host><port>$ch_dead_port</port></replica></shard></sf_dead>"
    mkdir -p "$dir/data" "$dir/tmp" "$dir/log"
    cat >"$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>1000000000</max_memory_usage></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>
    <profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors>
    <result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time>
  </interval></default></quotas>
</yandex>
XML
    cat >"$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/log/server.log</log>
    <errorlog>$dir/log/err.log</errorlog><size>10M</size><count>1</count></logger>
  <http_port>$http</http_port>
  <tcp_port>$tcp</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path>
  <tmp_path>$dir/tmp/</tmp_path>
  <user_files_path>$dir/tmp/</user_files_path>
  <users_config>$dir/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size>
  <uncompressed_cache_size>67108864</uncompressed_cache_size>
  <max_concurrent_queries>16</max_concurrent_queries>
  <remote_servers><sf>$shards</sf>$dead</remote_servers>
</yandex>
XML
    clickhouse-server --config-file="$dir/config.xml" >"$dir/log/stdout" 2>&1 &
    ch_pids+=($!)
}

ch_up() {
    local i
    for i in $(seq 600); do
        [ "$(curl -s "http://127.0.0.1:$1/ping" 2>/dev/null)" = "Ok." ] && return 0
        sleep 0.1
    done
    return 1
}

ch_two_shards() {
    read -r ch_http1 ch_tcp1 ch_http2 ch_tcp2 < <(ch_ports 4)
    ch_server "$1/s1" "$ch_http1" "$ch_tcp1" "$ch_tcp1" "$ch_tcp2"
    ch_server "$1/s2" "$ch_http2" "$ch_tcp2" "$ch_tcp1" "$ch_tcp2"
    ch_up "$ch_http1" && ch_up "$ch_http2"
}

ch_stop() {
    local p
    for p in "${ch_pids[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${ch_pids[@]}"; do wait "$p" 2>/dev/null; done
    ch_pids=()
}
