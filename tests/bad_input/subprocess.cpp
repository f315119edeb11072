#include "tests/bad_input/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace servesim::test {
namespace {

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

ProcessResult run_executable(const std::filesystem::path& executable,
                             const std::vector<std::string>& args,
                             const std::filesystem::path& working_dir, unsigned limit_s) {
  // Captured beside the working folder, so the run's own folder holds only what it wrote.
  const auto capture = working_dir.parent_path() / (working_dir.filename().string() + ".std");
  const std::string out_path = capture.string() + "out";
  const std::string err_path = capture.string() + "err";
  std::vector<std::string> words{executable.string()};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words)
    argv.push_back(word.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec. The alarm survives exec and kills a
    // hung run with SIGALRM.
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0 || ::chdir(working_dir.c_str()) != 0) ::_exit(126);
    ::dup2(in, 0);
    ::dup2(out, 1);
    ::dup2(err, 2);
    ::alarm(limit_s);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  ProcessResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
    result.timed_out = result.signal == SIGALRM;
  }
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  return result;
}

}  // namespace servesim::test
