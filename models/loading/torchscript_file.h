#pragma once
// Loading the TorchScript files our exporters write.

#include <torch/script.h>

#include <string>
#include <vector>

#include "models/loading/torch_error.h"

namespace svqa {

// Loads `path` onto `device` in eval mode; a bad file is one error line naming it.
torch::jit::Module load_torchscript_file(const std::string& path, at::Device device);

// Runs `method` of a module loaded from `path`; a LibTorch error becomes one std::runtime_error
// line "PATH: METHOD: message".
c10::IValue run_torchscript(torch::jit::Module& module, const std::string& path, const std::string& method,
                            std::vector<c10::IValue> inputs);

// "float32" | "float16" | "bfloat16" (an export manifest's dtype) → the scalar type.
at::ScalarType export_dtype(const std::string& name);
// The inverse: the name a manifest or runtime.dtype uses for `dtype`.
std::string dtype_name(at::ScalarType dtype);

}  // namespace svqa
