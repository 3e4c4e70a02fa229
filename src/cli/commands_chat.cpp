// CLI: engram chat (interactive, or --once for scripts).
#include <unistd.h>

#include <iostream>

#include "cli/commands.hpp"
#include "models/openai/openai_client.hpp"

namespace engram::cli {

namespace {

// One exchange; prints the answer (streamed on a terminal). Returns the exit code.
int Exchange(Cli& cli, const std::string& text, const ChatOptions& base, bool stream) {
  ChatOptions o = base;
  bool streamed = false;
  if (stream) {
    o.on_delta = [&](std::string_view d) {
      std::cout << d << std::flush;
      streamed = true;
    };
  }
  auto r = cli.engine->Chat(cli.CurrentScope(), text, o);
  if (!r.ok()) {
    if (streamed) std::cout << "\n";
    return Fail(r.status());
  }
  if (cli.g.json) {
    nlohmann::json used = nlohmann::json::array();
    for (const auto& i : r->used) used.push_back(ToJson(i));
    PrintJson({{"answer", r->answer}, {"turn_id", r->turn_id}, {"run_id", r->run_id},
               {"prompt_tokens", r->prompt_tokens}, {"completion_tokens", r->completion_tokens},
               {"used", used}});
  } else if (streamed) {
    std::cout << "\n";
  } else {
    std::cout << r->answer << "\n";
  }
  return 0;
}

}  // namespace

void RegisterChatCommands(CLI::App& app, Cli& cli, int& code) {
  auto* chat = app.add_subcommand("chat", "Talk with memory (needs a configured model)");
  static std::string once, persona, language, length;
  static int budget = 2000;
  chat->add_option("--once", once, "Send one message, print the answer and exit");
  chat->add_option("--persona", persona, "Who the assistant is (default: a friendly, helpful assistant)");
  chat->add_option("--language", language, "Answer language (default: the language of the message)");
  chat->add_option("--answer-length", length, "e.g. \"two sentences\" (default: as needed)");
  chat->add_option("--budget", budget, "Memory context budget in tokens")->check(CLI::Range(0, 1000000));
  chat->callback([&cli, &code, chat] {
    if ((code = cli.OpenEngine())) return;
    ChatOptions o;
    if (!persona.empty()) o.persona = persona;
    o.language = language;
    o.answer_length = length;
    o.retrieve.budget_tokens = budget;
    const bool tty = isatty(1) && !cli.g.json;
    if (chat->count("--once")) {
      if (once.find_first_not_of(" \t\r\n") == std::string::npos) {
        code = Fail(2, "--once: the message must not be empty");
        return;
      }
      code = Exchange(cli, once, o, tty);
      return;
    }
    if (cli.g.json) {
      code = Fail(2, "chat: --json needs --once");
      return;
    }
    const bool interactive = isatty(0);
    if (interactive) std::cout << "engram chat: type a message, /exit or Ctrl-D to leave.\n";
    for (std::string line;;) {
      if (interactive) std::cout << "> " << std::flush;
      if (!std::getline(std::cin, line)) break;
      if (line == "/exit" || line == "/quit") break;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      if (int c = Exchange(cli, line, o, tty); c != 0) code = c;  // keep going after a failure
    }
    if (interactive) std::cout << "\n";
  });
}

}  // namespace engram::cli
