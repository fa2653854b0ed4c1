# Timing constraints of the persist buffer unit (top module sbrp_pb), read by
# OpenSTA in `sbrp area` (constraints/timing/sta_timing.tcl). Units: ns, pF (the liberty's).
#
# Clock: the SM clock of the paper's GPU configuration (SBRP, ASPLOS'23,
# Table 1: "Clock speed 1365 MHz"), period 1000/1365 = 0.7326 ns, ideal (no
# clock tree, no latency, no uncertainty). Only the secondary "slack at the
# paper's clock" depends on it: the stage delays, the I/O paths and fmax are
# read from the paths themselves.
set ::sbrp_clk_period [expr {1000.0 / 1365.0}]
create_clock -name clk -period $::sbrp_clk_period [get_ports clock]

# Registered I/O: every input comes straight from a register of the SM (issue
# stage, L1 tag pipeline, persistence-domain interface) and every output goes
# straight into one, so no external logic is budgeted on either side: input
# and output delays are 0, and a path from or to a port is the unit's own
# logic. Inputs are driven by a BUFX4; each output drives about four gate
# inputs (0.04 pF, four INVX1 inputs of this library).
set sbrp_inputs [delete_from_list [all_inputs] [get_ports clock]]
set_input_delay 0 -clock clk $sbrp_inputs
set_driving_cell -lib_cell BUFX4 -pin Y $sbrp_inputs
set_output_delay 0 -clock clk [all_outputs]
set_load 0.04 [all_outputs]
