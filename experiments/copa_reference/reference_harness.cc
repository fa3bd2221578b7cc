// Replays a Copa event script through genericCC's own MarkovianCC (markoviancc.cc, rtt-window.cc,
// estimators.cc, compiled unmodified from a genericCC checkout given on the include path) and prints
// its decisions after every event, in the format crates/ccscope-cc/tests/copa_replay prints ccscope's.
//
// Script lines (times in integer ns; `#` lines are comments):
//   S <t> <id>          a packet left (ctcp.hh: set_timestamp, onPktSent(id))
//   A <t> <id> <rtt>    the ACK of packet id came back rtt after it was sent (ctcp.hh: onACK(id + 1, ...))
//   T <t>               the sender's retransmission timer fired: ctcp.hh calls init() if more than
//                       2000 ms have passed since the last ACK (or the last such reset), else onTimeout()
// Output, one line per event: <line> <kind> <cwnd> <delta> <mode> <slow_start> <velocity> <intersend_ms>
// where mode is 0 (DEFAULT_MODE) or 1 (LOSS_SENSITIVE_MODE, the paper's competitive mode).
//
// Build (experiments/copa_reference/compare.sh does this):
//   g++ -O2 -std=c++14 -I <genericCC> -I shim reference_harness.cc <genericCC>/rtt-window.cc \
//       <genericCC>/estimators.cc <genericCC>/random.cc -o reference_harness
#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <deque>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <list>
#include <map>
#include <queue>
#include <random>
#include <string>
#include <sys/types.h>
#include <tuple>
#include <unistd.h>
#include <vector>

// Read the controller's private state without touching its source: every std header it uses is
// already included above, so these only reach genericCC's own declarations. rtt-window.cc,
// estimators.cc and random.cc are compiled as they are, as separate units (rtt-window.hh has no guard).
#define class struct
#define private public
#define protected public
#include "markoviancc.cc"
#undef class
#undef private
#undef protected

int main(int argc, char** argv) {
  // Pantheon's Copa: `sender ... delta_conf=do_ss:auto:0.5` (genericCC sender.cc passes it here).
  std::string conf = argc > 1 ? argv[1] : "do_ss:auto:0.5";
  // genericCC prints its own chatter on std::cout; the decisions go to stdout through printf only.
  std::cout.setstate(std::ios::failbit);
  MarkovianCC cc(1.0);
  cc.interpret_config_str(conf);
  // ctcp.hh send_data: set_timestamp(start) then init() (no handshake RTT: external_min_rtt stays 0).
  cc.set_timestamp(0.0);
  cc.init();
  char kind;
  long long line = 0;
  // ctcp.hh send_data: last_ack_time starts at the start time and moves on every ACK and every reset.
  double last_ack_ms = 0.0;
  std::string text;
  while (std::getline(std::cin, text)) {
    ++line;
    if (text.empty() || text[0] == '#') continue;
    long long t = 0, id = 0, rtt = 0;
    kind = text[0];
    double now_ms = 0;
    if (kind == 'S') {
      sscanf(text.c_str() + 1, "%lld %lld", &t, &id);
      now_ms = t / 1e6;
      cc.set_timestamp(now_ms);
      cc.onPktSent((int)id);
    } else if (kind == 'A') {
      sscanf(text.c_str() + 1, "%lld %lld %lld", &t, &id, &rtt);
      now_ms = t / 1e6;
      cc.set_timestamp(now_ms);
      cc.onACK((int)id + 1, 0.0, (t - rtt) / 1e6);
      last_ack_ms = now_ms;
    } else if (kind == 'T') {
      sscanf(text.c_str() + 1, "%lld", &t);
      now_ms = t / 1e6;
      cc.set_timestamp(now_ms);
      if (now_ms - last_ack_ms > 2000) {
        cc.init();
        last_ack_ms = now_ms;
      } else {
        cc.onTimeout();
      }
    } else {
      fprintf(stderr, "line %lld: unknown event '%c'\n", line, kind);
      return 2;
    }
    printf("%lld %c %.17g %.17g %d %d %.17g %.17g\n", line, kind, cc._the_window, cc.delta,
           cc.operation_mode == MarkovianCC::DEFAULT_MODE ? 0 : 1, cc.slow_start ? 1 : 0,
           cc.update_amt, cc._intersend_time);
  }
  return 0;
}
