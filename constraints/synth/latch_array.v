// Latch arrays for `sbrp area --arrays latch` (docs/hardware.md §2,
// "Latch arrays"): a Yosys techmap of the memories ($mem_v2) onto level-
// sensitive latches, the storage of a standard-cell register file.
//
// Same cycle behaviour as the RTL's memories (docs/microarch.md §3): a write
// presented in cycle t-1 is in the array for the reads sampled at edge t+1,
// and a read sampled at edge t gets the old word (read before write).
//  * The write data is registered at edge t (`wd_q`).
//  * The word selects (`WR_ADDR == w`) and the bit enables (`WR_EN`, which
//    carries the write enable and the mask) pass latches open while the clock
//    is low, so they are stable while it is high: a glitch-free gate
//    `clock & sel & en` per stored bit, the clock-gating cell of a latch
//    register file.
//  * Word w's latches are open while the clock is high after edge t and take
//    `wd_q`; the synchronous read ports (a mux tree, then a flip-flop) sample
//    them at edge t+1.
// Defines (techmap -D): SBRP_BUF, SBRP_BUF_IN, SBRP_BUF_OUT, a buffer cell
// and its pins.
// Only memories of this shape are mapped (anything else keeps Yosys' flip-
// flop mapping, e.g. the flush FIFO's few-word queues): one write port and
// every read port on the same rising clock, synchronous, enabled, not
// transparent, no read reset, at least MIN_SIZE words.

(* techmap_celltype = "$mem_v2" *)
module _90_sbrp_latch_array (RD_CLK, RD_EN, RD_ARST, RD_SRST, RD_ADDR, RD_DATA,
                             WR_CLK, WR_EN, WR_ADDR, WR_DATA);
  parameter MEMID = "";
  parameter signed SIZE = 4;
  parameter signed OFFSET = 0;
  parameter signed ABITS = 2;
  parameter signed WIDTH = 8;
  parameter signed INIT = 1'bx;
  parameter signed RD_PORTS = 1;
  parameter RD_CLK_ENABLE = 1'b1;
  parameter RD_CLK_POLARITY = 1'b1;
  parameter RD_TRANSPARENCY_MASK = 1'b0;
  parameter RD_COLLISION_X_MASK = 1'b0;
  parameter RD_WIDE_CONTINUATION = 1'b0;
  parameter RD_CE_OVER_SRST = 1'b0;
  parameter RD_ARST_VALUE = 1'b0;
  parameter RD_SRST_VALUE = 1'b0;
  parameter RD_INIT_VALUE = 1'b0;
  parameter signed WR_PORTS = 1;
  parameter WR_CLK_ENABLE = 1'b1;
  parameter WR_CLK_POLARITY = 1'b1;
  parameter WR_PRIORITY_MASK = 1'b0;
  parameter WR_WIDE_CONTINUATION = 1'b0;
  // Smallest memory mapped to latches (words).
  localparam MIN_SIZE = 32;

  input [RD_PORTS-1:0] RD_CLK;
  input [RD_PORTS-1:0] RD_EN;
  input [RD_PORTS-1:0] RD_ARST;
  input [RD_PORTS-1:0] RD_SRST;
  input [RD_PORTS*ABITS-1:0] RD_ADDR;
  output [RD_PORTS*WIDTH-1:0] RD_DATA;
  input [WR_PORTS-1:0] WR_CLK;
  input [WR_PORTS*WIDTH-1:0] WR_EN;
  input [WR_PORTS*ABITS-1:0] WR_ADDR;
  input [WR_PORTS*WIDTH-1:0] WR_DATA;

  // Which pins are constants, and which nets the clocks are on.
  parameter _TECHMAP_CONSTMSK_RD_EN_ = 0;
  parameter _TECHMAP_CONSTVAL_RD_EN_ = 0;
  parameter _TECHMAP_CONSTMSK_RD_ARST_ = 0;
  parameter _TECHMAP_CONSTVAL_RD_ARST_ = 0;
  parameter _TECHMAP_CONSTMSK_RD_SRST_ = 0;
  parameter _TECHMAP_CONSTVAL_RD_SRST_ = 0;
  parameter _TECHMAP_CONNMAP_RD_CLK_ = 0;
  parameter _TECHMAP_CONNMAP_WR_CLK_ = 0;
  parameter _TECHMAP_BITS_CONNMAP_ = 0;

  localparam ONES = {RD_PORTS{1'b1}};
  localparam SAME_CLOCK = _TECHMAP_CONNMAP_RD_CLK_ ==
      {RD_PORTS{_TECHMAP_CONNMAP_WR_CLK_[_TECHMAP_BITS_CONNMAP_-1:0]}};
  wire _TECHMAP_FAIL_ = !(WR_PORTS == 1 && OFFSET == 0 && SIZE >= MIN_SIZE &&
      SIZE <= (1 << ABITS) && WR_CLK_ENABLE == 1'b1 && WR_CLK_POLARITY == 1'b1 &&
      RD_CLK_ENABLE == ONES && RD_CLK_POLARITY == ONES && RD_TRANSPARENCY_MASK == 0 &&
      RD_WIDE_CONTINUATION == 0 &&
      _TECHMAP_CONSTMSK_RD_EN_ == ONES && _TECHMAP_CONSTVAL_RD_EN_ == ONES &&
      _TECHMAP_CONSTMSK_RD_ARST_ == ONES && _TECHMAP_CONSTVAL_RD_ARST_ == 0 &&
      _TECHMAP_CONSTMSK_RD_SRST_ == ONES && _TECHMAP_CONSTVAL_RD_SRST_ == 0 &&
      SAME_CLOCK);

  wire clock = WR_CLK[0];

  // The write data, registered at the write's edge.
  wire [WIDTH-1:0] wd_q;
  // Bit enables held while the clock is high.
  wire [WIDTH-1:0] en_l;
  // The array, word w at [w*WIDTH +: WIDTH].
  wire [SIZE*WIDTH-1:0] q;

  genvar w, b, p;
  generate
    for (b = 0; b < WIDTH; b = b + 1) begin : col
      \$_DFF_P_ wd_reg (.C(clock), .D(WR_DATA[b]), .Q(wd_q[b]));
      \$_DLATCH_N_ en_latch (.E(clock), .D(WR_EN[b]), .Q(en_l[b]));
    end
    for (w = 0; w < SIZE; w = w + 1) begin : word
      wire sel_l;
      \$_DLATCH_N_ sel_latch (.E(clock), .D(WR_ADDR == w), .Q(sel_l));
      wire g = clock & sel_l;
      for (b = 0; b < WIDTH; b = b + 1) begin : cell
        \$_DLATCH_P_ store (.E(g & en_l[b]), .D(wd_q[b]), .Q(q[w*WIDTH + b]));
      end
    end
    for (p = 0; p < RD_PORTS; p = p + 1) begin : rd
      // The address enters through one buffer cell a bit (SBRP_BUF, a
      // library cell abc leaves alone): the decoders' load stays off the
      // register that drives the address, which also starts the unit's
      // critical stage (`r1`'s k).
      wire [ABITS-1:0] a;
      for (b = 0; b < ABITS; b = b + 1) begin : abuf
        `SBRP_BUF buf_cell (.`SBRP_BUF_IN(RD_ADDR[p*ABITS + b]), .`SBRP_BUF_OUT(a[b]));
      end
      // One-hot word selects shared by the columns, then an AND-OR per bit
      // (AOI gates; about a third smaller than a binary mux tree here).
      wire [SIZE-1:0] oh;
      for (w = 0; w < SIZE; w = w + 1) begin : sel
        assign oh[w] = a == w;
      end
      wire [WIDTH-1:0] d;
      for (b = 0; b < WIDTH; b = b + 1) begin : col
        wire [SIZE-1:0] c;
        for (w = 0; w < SIZE; w = w + 1) begin : word
          assign c[w] = q[w*WIDTH + b];
        end
        assign d[b] = |(oh & c);
      end
      for (b = 0; b < WIDTH; b = b + 1) begin : bit
        \$_DFF_P_ rd_reg (.C(clock), .D(d[b]), .Q(RD_DATA[p*WIDTH + b]));
      end
    end
  endgenerate
endmodule
