// The memories (kinds memory and procedural) of an engram export, to re-add
// on import: CLI `engram import` and HTTP `POST /v1/import` share the reader.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engram/facts.hpp"
#include "engram/result.hpp"

namespace engram::wire {

struct ExportedMemory {
  MemoryScope scope;
  MemoryMessage message;
  MemoryAddOptions options;
  int line = 0;  // 1-based line of the content
};

// The {"type": "fact"} lines of kind memory/procedural of JSONL text; other
// lines are left to the dialogue parser (a text starting with '[' is not
// JSONL and yields none). Each memory keeps its scope ids (tenant, user_id,
// agent_id, run_id), text, kind, role, attribution, actor, metadata,
// observation time, expiry and degraded mark. Errors are InvalidArgument naming `label` and the 1-based line;
// a line nested deeper than json_limits::kMaxDepth is one, whatever its type.
Result<std::vector<ExportedMemory>> ParseExportedMemories(std::string_view content, const std::string& label);

}  // namespace engram::wire
