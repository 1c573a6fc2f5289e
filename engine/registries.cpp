#include "engine/registries.h"

#include "core/config/experiment.h"
#include "engine/memory_contract.h"

namespace svqa {

Registries::Registries() {
  retrieval.add_rule({"encoding", [](const std::string& retrieval_type, const std::any& needs,
                                     const std::string& encoding_type, const std::any& provides) {
                        return contract_problem(encoding_type, std::any_cast<const EncoderProvides&>(provides),
                                                retrieval_type, std::any_cast<const RetrievalNeeds&>(needs));
                      }});
  encoding.add_header_rule({"stream.context_window_s", [](const std::string& encoding_type, const std::any& provides,
                                                          const ExperimentHeader& header) {
                              return context_window_problem(encoding_type, std::any_cast<const EncoderProvides&>(provides),
                                                            header.stream.context_window_s);
                            }});
}

}  // namespace svqa
