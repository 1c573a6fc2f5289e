#pragma once
// A failure of the machine, not of the question: the spill disk full, an I/O error, a file changed
// under the run. It is never written as a question's error record (a rerun would keep that as the
// answer): it stops the run with one line and a non-zero exit, and a rerun retries the question.

#include <stdexcept>
#include <string>

namespace svqa {

class EnvironmentError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace svqa
