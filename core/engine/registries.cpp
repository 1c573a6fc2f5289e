#include "core/engine/registries.h"

#include "core/engine/memory_contract.h"

namespace svqa {

Registries::Registries() {
  retrieval.add_rule({"encoding", [](const std::string& retrieval_type, const std::any& needs,
                                     const std::string& encoding_type, const std::any& provides) {
                        return contract_problem(encoding_type, std::any_cast<const EncoderProvides&>(provides),
                                                retrieval_type, std::any_cast<const RetrievalNeeds&>(needs));
                      }});
}

}  // namespace svqa
