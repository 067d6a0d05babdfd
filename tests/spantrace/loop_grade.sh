# shellcheck shell=bash
# loop_grade.sh - the event-loop attribution's grades (sourced after tap.sh):
# loop_grade DB NOWAIT_DB TRUTH.json MIN_DEFLATE: the goals of #36 on a database of
# scripts/record/nginx-loop.sh's recording (tests/spantrace/loop_score.py), against the same
# recording ingested without its wait lines.  Used live (t_sockets_loop.sh) and on the
# committed recording (tests/tracefs2spans/t_nginx_loop.sh).
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
