#pragma once
// manifest.json of an image-text export (python -m models.export.image_text): the model that
// external retrieval embeds frames and questions with (SigLIP, CLIP or PE-Core).

#include <cstdint>
#include <string>

#include "models/tokenizers/clip_text_tokenizer.h"
#include "models/video/image_spec.h"
#include "models/tokenizers/siglip_text_tokenizer.h"

namespace svqa {

inline constexpr int kImageTextFormatVersion = 1;

struct ImageTextManifest {
  std::string dir;                  // the export directory
  std::string architecture;         // "siglip", "clip" or "pe_core"
  std::string source, dtype;        // dtype: "float32", "float16" or "bfloat16"
  int64_t embedding_dim = 0;
  ImageSpec image;
  std::string text_tokenizer;       // "siglip" (SentencePiece) or "clip" (BPE with "</w>")
  SiglipTextSettings text;          // text_tokenizer "siglip"
  ClipTextSettings clip_text;       // text_tokenizer "clip"
  std::string image_file, text_file;
  std::string spiece_file;          // "siglip": the SentencePiece model
  std::string bpe_file;             // "clip": tokenizer.json of the BPE model
};

// Reads DIR/manifest.json; every error is one line naming the file and key.
ImageTextManifest load_image_text_manifest(const std::string& dir);

}  // namespace svqa
