#include "benchmarks/scoring/table_convention.h"

namespace svqa {

TableConvention table_convention(const std::string& benchmark) {
  if (benchmark == "streamingbench")
    return {{{"Object Recognition", "OP"}, {"Causal Reasoning", "CR"}, {"Clips Summarize", "CS"},
             {"Attribute Recognition", "ATP"}, {"Event Understanding", "EU"}, {"Text-Rich Understanding", "TR"},
             {"Prospective Reasoning", "PR"}, {"Spatial Understanding", "SU"}, {"Action Recognition", "ACP"},
             {"Counting", "CT"}},
            false};
  if (benchmark == "lvbench")
    return {{{"entity recognition", "ER"}, {"event understanding", "EU"}, {"key information retrieval", "KIR"},
             {"temporal grounding", "TG"}, {"reasoning", "Rea"}, {"summarization", "Sum"}},
            false};
  if (benchmark == "mlvu")
    return {{{"findNeedle", "Needle"}, {"ego", "Ego"}, {"plotQA", "PlotQA"}, {"order", "Order"}, {"count", "Count"},
             {"topic_reasoning", "Topic"}, {"anomaly_reco", "Anomaly"}},
            true};
  if (benchmark == "ovobench")  // constant.py's order; the task names are the paper's abbreviations
    return {{{"EPM", ""}, {"ASI", ""}, {"HLD", ""}, {"OCR", ""}, {"ACR", ""}, {"ATR", ""}, {"STU", ""}, {"FPD", ""},
             {"OJR", ""}, {"REC", ""}, {"SSR", ""}, {"CRR", ""}},
            false};
  if (benchmark == "videomme")
    return {{{"Temporal Perception", ""}, {"Spatial Perception", ""}, {"Attribute Perception", ""},
             {"Action Recognition", ""}, {"Object Recognition", ""}, {"OCR Problems", ""}, {"Counting Problem", ""},
             {"Temporal Reasoning", ""}, {"Spatial Reasoning", ""}, {"Action Reasoning", ""},
             {"Object Reasoning", ""}, {"Information Synopsis", ""}},
            false};
  return {};
}

}  // namespace svqa
