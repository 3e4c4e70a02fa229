// The maintenance prompts (our own wording). Each asks for one JSON object.
#pragma once

#include <string>
#include <vector>

#include "models/maintainer.hpp"

namespace engram::prompts {

std::string MaintenanceSystem(const std::string& language);
std::string AnalyzePages(const ChainContext& chain, const std::vector<PageDraft>& pages);
std::string SummarizeSegments(const std::vector<SegmentInput>& segments);
std::string Consolidate(const std::vector<ProfileSlot>& profile,
                        const std::vector<ConsolidationPage>& pages);

}  // namespace engram::prompts
