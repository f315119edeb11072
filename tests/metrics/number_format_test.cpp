// The number formats of the CSV files (csv_format.h): each fast path against the
// std::to_chars call it stands for; and the fast paths of iterations.csv's and requests.csv's
// rows against their columns.
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <catch2/catch.hpp>

#include "sim/core/sim_time.h"
#include "sim/metrics/csv_format.h"
#include "sim/metrics/record_columns.h"
#include "sim/metrics/records.h"

TEST_CASE("A simulated time prints as its nanoseconds in decimal", "[metrics]") {
  // The exact decimal of ns / 10^9, trailing zeros dropped: what the CSV should read.
  const auto decimal = [](std::int64_t ns) {
    std::string fraction = std::to_string(ns % 1000000000);
    fraction.insert(0, 9 - fraction.size(), '0');
    while (!fraction.empty() && fraction.back() == '0')
      fraction.pop_back();
    return std::to_string(ns / 1000000000) + (fraction.empty() ? "" : "." + fraction);
  };
  // 10630638 ns printed 0.010630638000000001 when seconds() multiplied by 1e-9.
  CHECK(servesim::format_round_trip(servesim::SimTime::from_ns(10630638).seconds()) ==
        "0.010630638");
  std::uint64_t state = 12345;
  for (int i = 0; i < 200000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    // Spread over every magnitude from 1 ns to 10^15 ns (11.6 days).
    const int digits = 1 + static_cast<int>((state >> 33) % 15);
    std::int64_t ns =
        static_cast<std::int64_t>(state >> 4) % static_cast<std::int64_t>(std::pow(10.0, digits));
    INFO(ns);
    // The shortest digits that read back as the double, in fixed notation (the files print the
    // same digits, in scientific notation below 10^-4 s where that is shorter: 1.7349e-05).
    std::array<char, 64> buffer{};
    const double seconds = servesim::SimTime::from_ns(ns).seconds();
    const auto end = std::to_chars(buffer.data(), buffer.data() + buffer.size(), seconds,
                                   std::chars_format::fixed)
                         .ptr;
    REQUIRE(std::string(buffer.data(), end) == decimal(ns));
  }
}

namespace {

// A 64-bit linear congruential generator's top 53 bits: test values, the same every run.
struct Lcg {
  explicit Lcg(std::uint64_t seed) : state(seed) {}
  std::uint64_t operator()() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 11;
  }
  std::uint64_t state;
};

// `write` writes `value` as `reference` (a std::to_chars call) does.
template <class Write, class Reference>
void expect_to_chars(double value, Write write, Reference reference) {
  std::array<char, 32> want{};
  std::array<char, 32> got{};
  const std::string wanted(want.data(), reference(want.data(), want.data() + want.size(), value));
  const std::string written(got.data(), write(got.data(), value));
  INFO(wanted);
  REQUIRE(written == wanted);
}

}  // namespace

TEST_CASE("write_round_trip writes what std::to_chars writes", "[metrics]") {
  // Its fast path (whole nanoseconds from 1 ms to 10^5 s) and the values around it: times in
  // every magnitude, times nudged off their nanosecond, and doubles with no nanosecond at all.
  Lcg next(987654321);
  const auto check = [](double value) {
    expect_to_chars(value, servesim::write_round_trip, [](char* first, char* last, double v) {
      return std::to_chars(first, last, v).ptr;
    });
  };
  for (int i = 0; i < 300000; ++i) {
    const int digits = 1 + static_cast<int>(next() % 16);  // 1 ns to 10^16 ns
    const auto ns =
        static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(std::pow(10.0, digits)));
    const double seconds = servesim::SimTime::from_ns(ns).seconds();
    check(seconds);
    check(std::nextafter(seconds, 1e300));
    check(std::nextafter(seconds, 0.0));
    check(static_cast<double>(next()) * 0x1p-40);
  }
  for (const double edge : {1e-3, 0.00099999999999999, 1e5, 99999.999999999, 0.0, 1.0, 10000.0})
    check(edge);
  // Zero and integers (prefill pair sums) from 10^5 to 10^15 and past it: with trailing zeros
  // (where scientific notation can be shorter), off by a fraction, negative, and -0.
  for (const double edge : {-0.0, 1e15, 1e15 - 1, 1e15 + 1, 1e16, 99999.0, 1e5 + 0.5, -1e6})
    check(edge);
  for (int i = 0; i < 300000; ++i) {
    const int digits = 6 + static_cast<int>(next() % 10);  // 10^5 to 10^15
    const int zeros = static_cast<int>(next() % static_cast<std::uint64_t>(digits));
    const double power = std::pow(10.0, zeros);
    const double integer =
        std::floor(
            static_cast<double>(next() % static_cast<std::uint64_t>(std::pow(10.0, digits))) /
            power) *
        power;
    check(integer);
    check(integer + 0.25);
    check(std::nextafter(integer, 1e300));
  }
}

TEST_CASE("write_9_digits writes what std::to_chars writes at 9 digits", "[metrics]") {
  // Its fast path (10^-4 to 10^9) and beyond: ratios of integers (as kv_utilization),
  // latencies of whole nanoseconds and their differences, random doubles of every magnitude,
  // near ties and powers of ten.
  Lcg next(123456789);
  const auto check = [](double value) {
    expect_to_chars(value, servesim::write_9_digits, [](char* first, char* last, double v) {
      return std::to_chars(first, last, v, std::chars_format::general, 9).ptr;
    });
  };
  for (int i = 0; i < 300000; ++i) {
    const auto a = static_cast<double>(next() % 1'000'000);
    const auto b = static_cast<double>(1 + next() % 1'000'000);
    check(a / b);
    const int digits = 1 + static_cast<int>(next() % 14);
    const auto ns =
        static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(std::pow(10.0, digits)));
    check(servesim::SimTime::from_ns(ns).seconds());
    check(servesim::SimTime::from_ns(ns).seconds() - 0.001);
    check(static_cast<double>(next()) * std::pow(10.0, static_cast<double>(next() % 30) - 20.0) *
          0x1p-53);
    // Just below, at and above a rounding tie of the ninth digit.
    const double tie = (static_cast<double>(100'000'000 + next() % 900'000'000) + 0.5) *
                       std::pow(10.0, static_cast<double>(next() % 13) - 12.0);
    check(tie);
    check(std::nextafter(tie, 0.0));
    check(std::nextafter(tie, 1e300));
  }
  for (int p = -6; p <= 10; ++p) {
    const double power = std::pow(10.0, p);
    for (const double v : {power, std::nextafter(power, 0.0), std::nextafter(power, 1e300),
                           power * 0.99999999949, power * 0.9999999995, -power})
      check(v);
  }
  for (const double edge : {0.0, -0.0, 1e-300, 5e-324, 1e300})
    check(edge);
}

TEST_CASE("an iterations.csv row's fast path writes what its columns' cells joined write",
          "[metrics]") {
  // Records of every magnitude: times of whole and of no nanoseconds, zero and huge counts,
  // pair sums with and without a fraction, utilizations of every ratio.
  Lcg next(24681357);
  const auto value = [&next](int max_digits) {
    const int digits = static_cast<int>(next() % static_cast<std::uint64_t>(max_digits + 1));
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(std::pow(10.0, digits)));
  };
  for (int i = 0; i < 20000; ++i) {
    servesim::IterationRecord it;
    it.replica = static_cast<std::int32_t>(value(4));
    it.start_s = servesim::SimTime::from_ns(value(15)).seconds();
    it.duration_s = i % 3 == 0 ? static_cast<double>(next()) * 0x1p-60
                               : servesim::SimTime::from_ns(value(10)).seconds();
    it.batch_size = static_cast<std::int32_t>(value(4));
    it.prefill_tokens = value(6);
    it.decode_tokens = value(4);
    it.preempted = static_cast<std::int32_t>(value(2));
    it.kv_capacity_tokens = value(12);
    it.kv_used_tokens = it.kv_capacity_tokens > 0 ? value(12) % it.kv_capacity_tokens : 0;
    it.kv_memory = {value(12), value(12), value(6), value(9), value(12), value(12)};
    it.cached_tokens = value(6);
    it.prefill_sequences = value(3);
    it.prefill_context_tokens = value(9);
    it.prefill_attention_pairs = static_cast<double>(value(15)) / (i % 2 == 0 ? 1.0 : 2.0);
    it.prefill_masked_pairs = static_cast<double>(next()) * 0x1p-20;
    it.decode_context_tokens = i == 0 ? std::numeric_limits<std::int64_t>::max() : value(12);
    it.sampled_sequences = value(4);

    std::string plain;
    for (const auto& column : servesim::iteration_columns()) {
      if (!plain.empty()) plain += ',';
      servesim::append_cell_text(plain, column.cell(it), column.format);
    }
    std::string fast(servesim::iteration_columns().size() * (servesim::kMaxNumberCellChars + 1),
                     '\0');
    fast.resize(
        static_cast<std::size_t>(servesim::write_iteration_cells(fast.data(), it) - fast.data()));
    REQUIRE(fast == plain);
  }
}

TEST_CASE(
    "a served request's requests.csv row fast path writes what its columns' cells joined "
    "write",
    "[metrics]") {
  // Times of whole and of no nanoseconds, zero and large counts, one output token (no TPOT)
  // and none, cut requests.
  Lcg next(13572468);
  const auto value = [&next](int max_digits) {
    const int digits = static_cast<int>(next() % static_cast<std::uint64_t>(max_digits + 1));
    return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(std::pow(10.0, digits)));
  };
  const auto time = [&](int i) {
    return i % 5 == 0 ? static_cast<double>(next()) * 0x1p-50
                      : servesim::SimTime::from_ns(value(14)).seconds();
  };
  for (int i = 0; i < 20000; ++i) {
    servesim::RequestRecord r;
    r.id = value(9);
    r.replica = static_cast<std::int32_t>(value(4)) - (i % 7 == 0 ? 1 : 0);
    r.arrival_s = time(i);
    r.first_scheduled_s = r.arrival_s + time(i);
    r.first_token_s = r.first_scheduled_s + time(i + 1);
    r.completion_s = r.first_token_s + (i % 4 == 0 ? 0.0 : time(i + 2));
    r.prompt_tokens = value(6);
    r.output_tokens = i % 4 == 0 ? static_cast<std::int64_t>(i % 8 / 4) : value(6);
    r.cut_output_tokens = i % 3 == 0 ? value(4) : 0;
    r.preemptions = static_cast<std::int32_t>(value(2));
    r.cached_tokens = value(6);

    std::string plain;
    for (const auto& column : servesim::request_columns()) {
      if (&column != servesim::request_columns().data()) plain += ',';
      servesim::append_cell_text(plain, column.cell(r), column.format);
    }
    std::string fast(servesim::request_columns().size() * (servesim::kMaxNumberCellChars + 1),
                     '\0');
    fast.resize(static_cast<std::size_t>(servesim::write_served_request_cells(fast.data(), r) -
                                         fast.data()));
    REQUIRE(fast == plain);
  }
}
