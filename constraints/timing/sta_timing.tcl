# OpenSTA script of `sbrp area` (a template: silicon/src/area.rs and
# silicon/src/route.rs replace @LIBERTY@, @NETLIST@, @SDC@ and @PARASITICS@,
# empty at zero wire load, `read_spef FILE` after routing). Prints, for
# silicon/src/sta.rs:
#   SBRP_PERIOD <clock period of the SDC, ns>
#   SBRP_WNS <worst slack at that clock, ns>
#   SBRP_PATH <kind>, then the worst path of that kind as report_checks
#   prints it ("No paths found." when there is none), for the kinds
#   reg_to_reg, in_to_reg, reg_to_out, in_to_out, data_to_reg, rst_to_reg,
#   rst_tree; SBRP_END after the last. data_to_reg is in_to_reg without rst;
#   rst_to_reg is rst alone: the port enters the reset register rst_q only
#   (spec section 7), and rst_tree is the reset tree from rst_q's clock pin
#   to every register (register to register). in_to_reg, rst included,
#   stays the headline figure.
# In sbrp_pb.sdc the input and output delays are 0, so the port paths are
# the unit's own logic; sbrp_pb_routed.sdc budgets a quarter of the period
# on each side.
read_liberty @LIBERTY@
read_verilog @NETLIST@
link_design sbrp_pb
read_sdc @SDC@
@PARASITICS@

puts "SBRP_PERIOD $::sbrp_clk_period"
puts "SBRP_WNS [worst_slack -max]"
set sbrp_in [delete_from_list [all_inputs] [get_ports clock]]
set sbrp_data [delete_from_list $sbrp_in [get_ports rst]]
set sbrp_ck [all_registers -clock_pins]
set sbrp_d [all_registers -data_pins]
# the reset register (instance rst_reg of the top); none in older netlists
set sbrp_rst_ck [get_pins -quiet rst_reg/*/CLK]
foreach {kind from to} [list \
    reg_to_reg $sbrp_ck $sbrp_d \
    in_to_reg $sbrp_in $sbrp_d \
    reg_to_out $sbrp_ck [all_outputs] \
    in_to_out $sbrp_in [all_outputs] \
    data_to_reg $sbrp_data $sbrp_d \
    rst_to_reg [get_ports rst] $sbrp_d \
    rst_tree $sbrp_rst_ck $sbrp_d] {
  puts "SBRP_PATH $kind"
  if {[llength $from] == 0} {
    puts "No paths found."
  } else {
    report_checks -path_delay max -from $from -to $to -group_count 1 -fields {input_pin} -digits 3
  }
}
puts "SBRP_END"
