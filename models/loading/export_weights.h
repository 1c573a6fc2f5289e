#pragma once
// An export's weights checked against its manifest at load: a manifest edited by hand, or a file
// copied in from another export (other widths, heads, vocabulary or dtype), fails here with one
// line naming the file, the tensor, the shape found and the manifest key that disagrees — instead
// of a shape error deep in a run, or a run that silently computes nonsense.

#include <torch/script.h>

#include <vector>

#include "models/loading/manifest.h"

namespace svqa {

class Tokenizer;

// Throws std::runtime_error on the first disagreement.
void check_export_weights(const Manifest& m, const torch::jit::Module& text, const torch::jit::Module& vision,
                          const std::vector<torch::jit::Module>& layers, const Tokenizer& tokenizer);

}  // namespace svqa
