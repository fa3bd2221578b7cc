// Stand-in for the one Boost header genericCC's random.hh includes: its PRNG typedef only names a
// Mersenne twister, which Copa never draws from (markoviancc.cc randomize_intersend returns its input).
#pragma once
#include <random>
namespace boost {
namespace random {
typedef std::mt19937 mt19937;
}
}
