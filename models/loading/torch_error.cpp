#include "models/loading/torch_error.h"

namespace svqa {

std::string torch_error_line(const c10::Error& e) { return torch_error_line(std::string(e.what_without_backtrace())); }

std::string torch_error_line(const std::string& text) {
  // TorchScript: "The following operation failed in the TorchScript interpreter.\nTraceback …\nRuntimeError: …"
  const size_t runtime = text.rfind("\nRuntimeError: ");
  std::string line = runtime == std::string::npos ? text : text.substr(runtime + 15);
  line = line.substr(0, line.find('\n'));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line.empty() ? "LibTorch error" : line;
}

}  // namespace svqa
