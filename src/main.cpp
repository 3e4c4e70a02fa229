// The engram binary: all subcommands live in the CLI layer.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return engram::cli::Main(argc, argv); }
