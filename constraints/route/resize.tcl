# Gate sizing for the routed loads (`sbrp area --route`): OpenSTA on the
# placed and routed netlist with its extracted wires (the first pass of
# silicon/src/route.rs), under constraints/timing/sbrp_pb_routed.sdc. A
# template: route.rs fills in the liberty, the flat netlist, the SDC, the
# SDC of the sizing (the same at a higher clock), the SPEF, the number of
# worst endpoints a round looks at and the number of rounds.
#
# ABC sized the gates for zero wire load; the wires mainly add load to the
# gates that drive them. Each round takes the worst path to each of the
# worst endpoints, and for every gate that drives a net of those paths,
# then every gate that only loads such a net (a side branch), tries the
# other drive strengths of its cell, one cell at a time: the best is kept
# if the worst slack improves, or stays and the total negative slack
# improves; else the cell is left as it was. The library's sizes:
# INVX1/2/4/8, BUFX2/4, AND2X1/2, OR2X1/2 (every other cell of OSU 0.18 um
# has one size). The wires stay those of the first pass: the sized netlist
# is placed and routed again.
#
# Prints, for route.rs:
#   SBRP_START <worst slack> <total negative slack>   (ns, at the SDC's clock;
#                                                      SBRP_DONE: after sizing)
#   SBRP_SIZED <instance> <old cell> <new cell> <net driven by pin Y>
#   SBRP_DONE <worst slack> <total negative slack> <rounds> <trials>
read_liberty @LIBERTY@
read_verilog @NETLIST@
link_design sbrp_pb
read_sdc @SDC@
read_spef @SPEF@
set sbrp_start "[worst_slack -max] [total_negative_slack -max]"
# the sizing's clock: the SDC's with a guard band (this second SDC is the same
# SDC at a higher clock), so that the paths a little faster than the worst
# are improved too (through the total negative slack) before the second
# placement moves the wires
read_sdc @SIZING_SDC@

set sbrp_sizes {{INVX1 INVX2 INVX4 INVX8} {BUFX2 BUFX4} {AND2X1 AND2X2} {OR2X1 OR2X2}}
set sbrp_family [dict create]
foreach f $sbrp_sizes {
    foreach c $f { dict set sbrp_family $c $f }
}

set sbrp_wns [worst_slack -max]
set sbrp_tns [total_negative_slack -max]
set sbrp_trials 0
# instance -> its cell before the sizing
set sbrp_orig [dict create]

# Tries the other sizes of the instance's cell; keeps the best if it
# improves the timing. Returns 1 when the cell changed.
proc sbrp_size {name} {
    global sbrp_wns sbrp_tns sbrp_trials sbrp_family sbrp_orig
    set inst [get_cells $name]
    set old [get_property $inst ref_name]
    if {![dict exists $sbrp_family $old]} { return 0 }
    set best $old
    set bw $sbrp_wns
    set bt $sbrp_tns
    foreach c [dict get $sbrp_family $old] {
        if {$c eq $old} { continue }
        replace_cell $inst $c
        incr sbrp_trials
        set w [worst_slack -max]
        set t [total_negative_slack -max]
        if {$w > $bw + 1e-4 || ($w > $bw - 1e-5 && $t > $bt + 1e-4)} {
            set best $c
            set bw $w
            set bt $t
        }
    }
    replace_cell $inst $best
    if {$best eq $old} { return 0 }
    set sbrp_wns $bw
    set sbrp_tns $bt
    if {![dict exists $sbrp_orig $name]} { dict set sbrp_orig $name $old }
    return 1
}

set sbrp_round 0
while {$sbrp_round < @ROUNDS@} {
    incr sbrp_round
    set drivers {}
    set loads {}
    foreach pe [find_timing_paths -path_delay max -group_count @PATHS@ -endpoint_count 1] {
        foreach pin [[$pe path] pins] {
            if {![$pin is_driver]} { continue }
            set name [get_full_name [$pin instance]]
            # a port of the top
            if {$name eq ""} { continue }
            if {[lsearch -exact $drivers $name] < 0} { lappend drivers $name }
            foreach load [get_pins -quiet -of_objects [get_nets -of_objects $pin]] {
                if {[$load is_driver]} { continue }
                set l [get_full_name [$load instance]]
                if {$l ne "" && [lsearch -exact $loads $l] < 0} { lappend loads $l }
            }
        }
    }
    set changed 0
    foreach name $drivers {
        incr changed [sbrp_size $name]
    }
    foreach name $loads {
        if {[lsearch -exact $drivers $name] < 0} { incr changed [sbrp_size $name] }
    }
    if {$changed == 0} { break }
}

dict for {name old} $sbrp_orig {
    set new [get_property [get_cells $name] ref_name]
    if {$new eq $old} { continue }
    set net [get_nets -of_objects [get_pins $name/Y]]
    puts "SBRP_SIZED $name $old $new [get_full_name $net]"
}
read_sdc @SDC@
puts "SBRP_START $sbrp_start"
puts "SBRP_DONE [worst_slack -max] [total_negative_slack -max] $sbrp_round $sbrp_trials"
