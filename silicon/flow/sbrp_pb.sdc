# Timing constraints of the persist buffer unit (top module sbrp_pb), read by
# OpenSTA in `sbrp area` (flow/sta_timing.tcl). Units: ns, pF (the liberty's).
#
# Clock: the SM clock of the paper's GPU configuration (SBRP, ASPLOS'23,
# Table 1: "Clock speed 1365 MHz"), period 1000/1365 = 0.7326 ns. The flow
# sets ::sbrp_clk_period itself when it searches for the highest clock this
# library meets; otherwise the paper's clock is used.
if {![info exists ::sbrp_clk_period]} {
  set ::sbrp_clk_period [expr {1000.0 / 1365.0}]
}
create_clock -name clk -period $::sbrp_clk_period [get_ports clock]
# The clock is ideal (no clock tree is built): no latency, no uncertainty.

# Inputs: the request (req_*), ack and drain_all come from registers of the
# SM front end (issue stage, L1 tag check, persistence-domain interface) and
# pass through some of its logic first: they arrive 25% of the cycle after
# the clock edge, driven by a BUFX4.
set ::sbrp_io_fraction 0.25
set sbrp_inputs [delete_from_list [all_inputs] [get_ports clock]]
set_input_delay [expr {$::sbrp_io_fraction * $::sbrp_clk_period}] -clock clk $sbrp_inputs
set_driving_cell -lib_cell BUFX4 -pin Y $sbrp_inputs

# Outputs: req_ready/req_wait (back to the issue stage), the flush port (to
# the L1 write-back path), inv_pm, stall and the obs_* ports feed logic of
# the SM that needs the last 25% of the cycle; each drives about four gate
# inputs (0.04 pF, four INVX1 inputs of this library).
set_output_delay [expr {$::sbrp_io_fraction * $::sbrp_clk_period}] -clock clk [all_outputs]
set_load 0.04 [all_outputs]
