#pragma once
// LibTorch errors as svqa reports errors: one line. A light header (c10 only) for the CLI.

#include <c10/util/Exception.h>

#include <string>

namespace svqa {

// A LibTorch error as one line, without the C++ backtrace that c10::Error::what() carries: the
// message of what_without_backtrace(), or for an error raised inside a TorchScript module the
// interpreter's own last line ("RuntimeError: …") instead of the serialized code around it.
std::string torch_error_line(const c10::Error& e);
// The same for the text of another exception LibTorch threw (the TorchScript interpreter rethrows
// a module's error as std::runtime_error with the serialized code around it).
std::string torch_error_line(const std::string& what);

}  // namespace svqa
