#pragma once
// Where and how tensors run: device, dtype and CPU threads, all from the experiment's `runtime:`.

#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <string>

#include "core/config/schema.h"

namespace svqa {

struct RuntimeOptions {
  std::string device = "cpu";
  std::string dtype = "float32";
  int64_t threads = 0;
  int64_t seed = 0;

  static void declare(Schema<RuntimeOptions>& s) {
    s.field("device", &RuntimeOptions::device, "torch device the model and attention run on")
        .matches("cpu|cuda|cuda:(0|[1-9][0-9]{0,2})|mps", "cpu, cuda, cuda:N (N < 1000) or mps");
    s.field("dtype", &RuntimeOptions::dtype, "dtype of weights and activations")
        .one_of({"float32", "float16", "bfloat16"});
    s.field("threads", &RuntimeOptions::threads, "CPU threads for torch's intra-op parallelism; 0 = torch's default")
        .min(0);
    s.field("seed", &RuntimeOptions::seed, "seed for torch's random generator").min(0);
  }
};

c10::Device runtime_device(const RuntimeOptions& o);
c10::ScalarType runtime_dtype(const RuntimeOptions& o);
// Applies threads and seed to the process.
void apply_runtime(const RuntimeOptions& o);

}  // namespace svqa
