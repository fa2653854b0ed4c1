# OpenSTA script of `sbrp area` (a template: silicon/src/area.rs replaces
# @LIBERTY@, @NETLIST@ and @SDC@). Prints lines the flow parses:
#   SBRP_WNS <worst slack, ns, at the paper's clock>
#   SBRP_FMAX_PERIOD <shortest period the design meets, ns>
#   SBRP_ORDERING_DELAY <worst arrival at req_wait/req_ready minus input delay, ns>
# and the critical path at the paper's clock.
read_liberty @LIBERTY@
read_verilog @NETLIST@
link_design sbrp_pb
read_sdc @SDC@

puts "SBRP_PERIOD $::sbrp_clk_period"
puts "SBRP_WNS [worst_slack -max]"
report_checks -path_delay max -group_count 1 -fields {input_pin} -digits 3
puts "SBRP_PATH_END"

# Ordering checks: the request's decision outputs (req_ready, req_wait) are a
# function of the request and the state; their worst arrival, less the
# input delay, is the delay of the ordering checks (l1_pbidx -> entry ->
# snapshot/age compares -> decision).
set in_delay [expr {$::sbrp_io_fraction * $::sbrp_clk_period}]
report_checks -path_delay max -to [get_ports {req_ready req_wait}] -format end -digits 3
set ord_paths [find_timing_paths -path_delay max -to [get_ports {req_ready req_wait}] -group_count 1]
foreach pe $ord_paths {
  puts "SBRP_ORDERING_DELAY [expr {[$pe data_arrival_time] * 1e9 - $in_delay}]"
}

# Highest clock: bisection on the period (input/output delays scale with it).
# Every path's slack is a*T - b with a between 1 - 2*io_fraction (input to
# output) and 1 (register to register), so with slack S < 0 at the paper's
# period T0 the shortest period lies in [T0 - S, T0 - S / (1 - 2*io_fraction)].
set t0 $::sbrp_clk_period
set s0 [worst_slack -max]
if {$s0 >= 0} {
  set lo 0.01
  set hi $t0
} else {
  set lo [expr {$t0 - $s0}]
  set hi [expr {$t0 - $s0 / (1.0 - 2.0 * $::sbrp_io_fraction)}]
}
for {set i 0} {$i < 12} {incr i} {
  set mid [expr {($lo + $hi) / 2.0}]
  set ::sbrp_clk_period $mid
  read_sdc @SDC@
  if {[worst_slack -max] >= 0} { set hi $mid } else { set lo $mid }
}
puts "SBRP_FMAX_PERIOD $hi"
