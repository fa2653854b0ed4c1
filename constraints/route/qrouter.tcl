# Detailed routing of `sbrp area --route`, appended by silicon/src/route.rs to
# the qrouter configuration qflow's placement wrote (LEF, layers, obstructions,
# read_def). qflow's own `standard_route` retries without bound on a net it
# cannot route; this script gives stage 2 (rip-up and reroute) three rounds of
# rising effort, then writes what it has. route.rs reads the SBRP_ lines and
# refuses timing on a partly routed design.
# The clock is not routed: this flow has no clock-tree synthesis (the SDC's
# clock is ideal, with an uncertainty for the tree's skew), and qrouter's
# maze search on its one net of every flip-flop took minutes per rip-up.
ignore clock
set sbrp_failed [stage1]
puts "SBRP_STAGE1_FAILED $sbrp_failed"
set sbrp_round 0
while {$sbrp_failed > 0 && $sbrp_round < 3} {
    incr sbrp_round
    set sbrp_failed [stage2 mask none effort [expr {10 * $sbrp_round}]]
}
puts "SBRP_FAILED $sbrp_failed"
cleanup all
write_def @DEF@
write_delays @RC@
quit
