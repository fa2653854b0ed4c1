# Timing constraints of the placed and routed unit (top module sbrp_pb), read
# by OpenSTA in `sbrp area --route` (constraints/timing/sta_timing.tcl, with
# the extracted wire parasitics). Units: ns, pF (the liberty's).
#
# Clock: the routed target, 330 MHz (issue 28), period 3.030 ns. Still ideal
# (the flow has no clock-tree synthesis: qflow routes the clock as a plain
# net), so skew and jitter are budgeted as a clock uncertainty of 5% of the
# period. The I/O delays below are also fractions of this period; the fmax
# of `sbrp area --route` scales all three with the period it reports
# (silicon/src/route.rs), and OpenSTA's slack here is at 330 MHz.
set ::sbrp_clk_period [expr {1000.0 / 330.0}]
set ::sbrp_uncertainty_frac 0.05
set ::sbrp_io_frac 0.25
create_clock -name clk -period $::sbrp_clk_period [get_ports clock]
set_clock_uncertainty -setup [expr {$::sbrp_uncertainty_frac * $::sbrp_clk_period}] [get_clocks clk]

# I/O: the SM's registers are on the other side of every port, but wires and
# a little logic are not: a request leaves the SM's issue/L1 tag pipeline
# registers a quarter of a cycle before it reaches the unit (routing across
# the SM, repeaters), and every output must reach the SM's registers a
# quarter of a cycle before the edge. Inputs are driven by a BUFX4; each
# output drives about four gate inputs (0.04 pF) plus its wire.
set sbrp_inputs [delete_from_list [all_inputs] [get_ports clock]]
set_input_delay [expr {$::sbrp_io_frac * $::sbrp_clk_period}] -clock clk $sbrp_inputs
set_driving_cell -lib_cell BUFX4 -pin Y $sbrp_inputs
set_output_delay [expr {$::sbrp_io_frac * $::sbrp_clk_period}] -clock clk [all_outputs]
set_load 0.04 [all_outputs]
