// Yosys latches onto the library's LATCH cell (`sbrp area --arrays latch`):
// OSU 0.18 um's LATCH is open while CLK is high; a latch open while its
// enable is low gets an inverter. Yosys 0.23's dfflibmap maps flip-flops only.
module \$_DLATCH_P_ (input E, input D, output Q);
  LATCH _TECHMAP_REPLACE_ (.CLK(E), .D(D), .Q(Q));
endmodule
module \$_DLATCH_N_ (input E, input D, output Q);
  wire e_n;
  INVX1 inv (.A(E), .Y(e_n));
  LATCH _TECHMAP_REPLACE_ (.CLK(e_n), .D(D), .Q(Q));
endmodule
