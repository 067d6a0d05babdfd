# shellcheck shell=bash
# grade.sh - attribution without instrumentation, graded against which requests were
# expensive (sourced after tap.sh; the numbers from tests/spantrace/loop_score.py):
#
# loop_grade DB NOWAIT_DB TRUTH.json MIN_DEFLATE: an event loop (#36's goals) on a database
#   of scripts/record/nginx-loop.sh's recording, against the same recording ingested without
#   its wait lines (t_sockets_loop.sh live, tests/tracefs2spans/t_nginx_loop.sh committed);
# go_grade DB NOGO_DB TRUTH.json MIN_BURN: a Go server's goroutines against its threads
#   (the same recording without the goroutine lines; t_sockets_go.sh, t_sockets_grpc.sh live,
#   tests/tracefs2spans/t_go_requests.sh committed).
loop_grade() {
    local nsamp att dz dza right wrong natt ndza nright
    read -r nsamp att dz dza right wrong < <(python3 "$top/tests/spantrace/loop_score.py" "$1" "$3")
    read -r _ natt _ ndza nright _ < <(python3 "$top/tests/spantrace/loop_score.py" "$2" "$3")
    check_eval "the worker was sampled: $nsamp samples, $dz in deflate (at least $4)" "[ ${dz:-0} -ge $4 ]"
    check_eval "the worker's samples given to one span: $att % (goal >= 80; without the waits $natt %)" \
        "awk 'BEGIN { exit !($att >= 80 && $natt + 20 < $att) }'"
    check_eval "its deflate samples given to one span: $dza % (without the waits $ndza %)" \
        "awk 'BEGIN { exit !($dza >= 80) }'"
    check_eval "deflate samples on a big.txt request, right: $right % (goal >= 80; without the waits $nright %)" \
        "awk 'BEGIN { exit !($right >= 80) }'"
    check_eval "deflate samples given to a small.txt request, wrong: $wrong % of those given (goal <= 2)" \
        "awk 'BEGIN { exit !($wrong <= 2) }'"
}

go_grade() {
    local nsamp att hot hota right wrong nright
    read -r nsamp att hot hota right wrong < <(python3 "$top/tests/spantrace/loop_score.py" "$1" "$3" 'main\.burn(;|$)')
    read -r _ _ _ _ nright _ < <(python3 "$top/tests/spantrace/loop_score.py" "$2" "$3" 'main\.burn(;|$)')
    check_eval "the server was sampled: $nsamp samples, $hot in burn() (at least $4)" "[ ${hot:-0} -ge $4 ]"
    check_eval "burn()'s samples on an expensive request, right: $right % (goal >= 90; by thread $nright %)" \
        "awk 'BEGIN { exit !($right >= 90 && $nright + 30 < $right) }'"
    check_eval "burn()'s samples given to a cheap request, wrong: $wrong % of those given (goal <= 2)" \
        "awk 'BEGIN { exit !($wrong <= 2) }'"
}
