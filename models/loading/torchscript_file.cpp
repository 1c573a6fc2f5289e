#include "models/loading/torchscript_file.h"

#include <stdexcept>

namespace svqa {

torch::jit::Module load_torchscript_file(const std::string& path, at::Device device) {
  try {
    auto m = torch::jit::load(path, device);
    m.eval();
    return m;
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": not a loadable TorchScript file (" + torch_error_line(e) + ")");
  }
}

c10::IValue run_torchscript(torch::jit::Module& module, const std::string& path, const std::string& method,
                            std::vector<c10::IValue> inputs) {
  try {
    return module.get_method(method)(std::move(inputs));
  } catch (const c10::Error& e) {
    throw std::runtime_error(path + ": " + method + ": " + torch_error_line(e));
  } catch (const std::runtime_error& e) {  // the interpreter's rethrow of an error inside the module
    throw std::runtime_error(path + ": " + method + ": " + torch_error_line(std::string(e.what())));
  }
}

at::ScalarType export_dtype(const std::string& name) {
  if (name == "float16") return at::kHalf;
  if (name == "bfloat16") return at::kBFloat16;
  return at::kFloat;
}

std::string dtype_name(at::ScalarType dtype) {
  if (dtype == at::kHalf) return "float16";
  if (dtype == at::kBFloat16) return "bfloat16";
  return dtype == at::kFloat ? "float32" : c10::toString(dtype);
}

}  // namespace svqa
