// Environment of the latch-array check (`sbrp area --arrays latches`,
// silicon/src/latch.rs, docs/hardware.md §2 "Latch arrays"): the RTL memory
// (`gold`, mapped to flip-flops) and the same memory through
// constraints/synth/latch_array.v (`gate`) side by side, read data compared
// at every step of the global clock. Four steps a cycle, the clock high in
// the last two (the rising edge at step 2); the inputs, free otherwise,
// change one step after the rising edge, as the unit's registers drive them
// (their clock-to-Q). @AW@ and @B@: address and data bits.
// The buffer the mapping puts on each read-address bit (a library cell in
// synthesis).
module latch_check_buf(input A, output Y);
  assign Y = A;
endmodule

module latch_env(input we_i, input [@AW@-1:0] wa_i, input [@B@-1:0] wd_i,
                 input [@B@-1:0] wm_i, input [@AW@-1:0] ra0_i, input [@AW@-1:0] ra1_i);
  reg [1:0] step = 0;
  always @($global_clock) step <= step + 1;
  wire clock = step[1];
  reg we = 0;
  reg [@AW@-1:0] wa = 0, ra0 = 0, ra1 = 0;
  reg [@B@-1:0] wd = 0, wm = 0;
  always @($global_clock)
    if (step == 2) begin
      we <= we_i; wa <= wa_i; wd <= wd_i; wm <= wm_i; ra0 <= ra0_i; ra1 <= ra1_i;
    end
  wire [@B@-1:0] g0, g1, t0, t1;
  gold g(.clock(clock), .we(we), .wa(wa), .wd(wd), .wm(wm), .ra0(ra0), .rd0(g0), .ra1(ra1), .rd1(g1));
  gate t(.clock(clock), .we(we), .wa(wa), .wd(wd), .wm(wm), .ra0(ra0), .rd0(t0), .ra1(ra1), .rd1(t1));
  always @* assert (g0 == t0 && g1 == t1);
endmodule
