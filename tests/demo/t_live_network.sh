#!/usr/bin/env bash
# Live (issue #30.5): the demo service slowed by its network, not by itself
# (scripts/record-demo.sh with SLOW_KIND=network, about 14 s): from the slow phase on, the
# clients' request segments are dropped at 80 % odds, one a connection at most, after the
# capture on lo saw them (nftables on the input hook), so TCP retransmits them and the
# capture holds both copies.  spanfold ingest and report: the retransmissions are
# connection events, and the report names the slow phase (of the endpoint whose inflection is
# nearest the true start: the loss hits every HTTP endpoint alike) as the network's, near
# the true start, the parts adding up, with the retransmissions as its evidence.  Needs
# root, BPF, perf, tcpdump, nftables and a kernel that filters with it; skips with the
# reason otherwise (tc netem, the usual way to lose packets, needs sch_netem, which
# kernels often leave out; nftables drops them on every kernel with nf_tables).
set -u
. "$(dirname "$0")/../tap.sh"
bin=${SF_BIN:-$top/bin}
tap_name="demo live recording, slowed by its network"
. "$top/tests/demo/live_need.sh"
command -v nft >/dev/null || tap_skip_all "nft not installed (nftables: scripts/deps.sh heavy)"
tap_tmpdir t_demo_live_network

live_cause network --any-endpoint --grew network_ns:20e6 -- SLOW_KIND=network
ok "scripts/record-demo.sh recorded a run slowed by lost request segments"
q() { sqlite3 "$tmp/r.db" "$1"; }
dropped=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["service"]["slow_network"]["dropped_segments"])' "$tmp/rec/MANIFEST.json")
retx=$(q "SELECT count(*) FROM connection_events WHERE kind = 'retransmit' AND detail LIKE '% request %'")
check_eval "every request segment nftables dropped ($dropped) is a retransmission in the capture ($retx)" \
    "[ $dropped -ge 10 ] && [ $retx -ge $dropped ]"
sed 's/^/# /' "$tmp/why"
check_eval "report: the slow phase is the network's, near the true start, the parts adding up" \
    "grep -q LIVE_OK '$tmp/why'"
sed -n '1s/^/# /p' "$tmp/rep.err" | cut -c1-400
check_eval "the verdict says it in words, with the retransmissions" \
    "grep -q 'in the network (transfer, retransmissions)' '$tmp/rep.err' && grep -q 'TCP retransmissions a request' '$tmp/rep.err'"
tap_plan
