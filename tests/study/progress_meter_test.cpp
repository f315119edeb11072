#include <sstream>

#include <catch2/catch.hpp>

#include "sim/study/progress_meter.h"

TEST_CASE("Progress shows points done and time left on a terminal only", "[study]") {
  std::ostringstream terminal;
  {
    servesim::ProgressMeter meter(terminal, "sweep", true);
    meter.expect(3);
    meter.point_done();
    CHECK_THAT(terminal.str(), Catch::StartsWith("\rsweep: 1/3 points, ") &&
                                   Catch::Contains("s elapsed") && Catch::Contains("s left"));
    meter.point_done();
    meter.point_done();
    CHECK(meter.done() == 3);
  }
  CHECK_THAT(terminal.str(), Catch::Contains("3/3 points") && Catch::EndsWith("\n"));

  std::ostringstream log;
  {
    servesim::ProgressMeter meter(log, "sweep", false);
    meter.expect(2);
    meter.point_done();
    meter.point_done();
    CHECK(meter.done() == 2);
  }
  CHECK(log.str().empty());
}
