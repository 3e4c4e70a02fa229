// Fact rules of the built-in extractive engine: decide whether one sentence
// of a dialogue states something durable about its speaker, and rewrite it as
// a self-contained third-person statement that keeps the original wording.
#pragma once

#include <string>
#include <string_view>

namespace engram::builtin {

enum class Role { kUser, kAssistant };

// Returns the fact stated by `sentence`, or "" when it states nothing durable.
//
// A sentence is a fact when a first-person subject ("I", "I'm", "I've", "we",
// ...) is followed by a durable pattern: "am/'m a|an|from|into|married|<verb>ing
// ...", durable verbs (work, live, love, like, enjoy, hate, prefer, have, went,
// visited, moved, started, joined, bought, adopted, other past forms, ...),
// "'ve been/<participle>", plans ("planning/going/want/hope to ..."), or when it
// starts with "my/our <family|pet|name|job|favourite|...>". For kAssistant,
// commitments also count ("I recommend/suggest", "I can <verb>", "I'll ...",
// "I'm happy to help"). Questions, greetings, thoughts/feelings ("I think",
// "I'm so glad") and statements without content ("I love it") are not facts.
//
// The rewrite replaces I/me/my/mine/I'm/I've/I'll/I'd with `speaker` forms
// (with verb agreement: "I love" -> "Caroline loves"), "we/us/our" with
// "<speaker> and others"/"their", and "your", object "you", "you're" & co.
// and "you" before a past or "are"/"were" ("as you suggested", "while you
// were racing") with `listener` (when not empty), except inside a closed quotation ("I watched 'My
// Octopus Teacher'" keeps the title). Leading interjections ("Oh, ", "And yes, ") and markdown's
// bold markers ("**") are dropped, the first letter is capitalised and the fact ends with a period.
// A sentence whose subject points back to what was said before it ("It reminds me why I love being
// a mom") gives the speaker's own clause ("Caroline loves being a mom") when a link opens it, it
// names what it speaks of and it says more than the words it leaves; otherwise it stays whole.
// Relative dates are kept as they are here (the callers, which know when the sentence was said,
// write them as dates: WithAbsoluteTimes). At most 300 bytes.
std::string ExtractFact(std::string_view sentence, Role role, const std::string& speaker,
                        const std::string& listener);

}  // namespace engram::builtin
