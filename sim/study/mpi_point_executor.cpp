#include "sim/study/mpi_point_executor.h"

#include <string>

#include <mpi.h>

#include "sim/core/error.h"
#include "sim/core/json_reader.h"
#include "sim/study/point_outcome.h"
#include "sim/study/progress_meter.h"
#include "sim/study/thread_point_executor.h"

namespace servesim {
namespace {

class MpiPointExecutor final : public IPointExecutor {
 public:
  MpiPointExecutor(int jobs, const ProcessGroup& processes)
      : threads_(jobs), processes_(processes) {}

  std::vector<nlohmann::json> evaluate(std::size_t count, const PointEvaluation& point,
                                       ProgressMeter* progress) override {
    std::vector<std::size_t> mine;
    for (auto i = static_cast<std::size_t>(processes_.rank); i < count;
         i += static_cast<std::size_t>(processes_.size)) {
      mine.push_back(i);
    }
    const auto local = threads_.evaluate_captured(
        mine.size(), [&](std::size_t k) { return point(mine[k]); }, progress);
    nlohmann::json packed = nlohmann::json::array();
    for (std::size_t k = 0; k < mine.size(); ++k)
      packed.push_back({mine[k], local[k]});
    const std::string bytes = packed.dump();

    const auto ranks = static_cast<std::size_t>(processes_.size);
    int length = static_cast<int>(bytes.size());
    std::vector<int> lengths(ranks);
    check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD));
    std::vector<int> offsets(ranks, 0);
    for (std::size_t r = 1; r < ranks; ++r)
      offsets[r] = offsets[r - 1] + lengths[r - 1];
    std::string all(static_cast<std::size_t>(offsets.back() + lengths.back()), '\0');
    check(MPI_Allgatherv(bytes.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                         MPI_CHAR, MPI_COMM_WORLD));

    std::vector<nlohmann::json> outcomes(count);
    for (std::size_t r = 0; r < ranks; ++r) {
      const auto part =
          parse_json_text(std::string_view(all).substr(static_cast<std::size_t>(offsets[r]),
                                                       static_cast<std::size_t>(lengths[r])),
                          "study results of MPI rank " + std::to_string(r));
      for (const auto& entry : part)
        outcomes[entry[0].get<std::size_t>()] = entry[1];
    }
    if (progress != nullptr) {
      for (std::size_t i = mine.size(); i < count; ++i)
        progress->point_done();
    }
    return unwrap_points(std::move(outcomes));
  }

 private:
  static void check(int status) {
    if (status != MPI_SUCCESS) {
      throw InvariantError("MPI exchange of study results failed (code " + std::to_string(status) +
                           ")");
    }
  }

  ThreadPointExecutor threads_;
  ProcessGroup processes_;
};

}  // namespace

std::unique_ptr<IPointExecutor> make_mpi_point_executor(int jobs, const ProcessGroup& processes) {
  return std::make_unique<MpiPointExecutor>(jobs, processes);
}

}  // namespace servesim
