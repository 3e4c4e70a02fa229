// The engram command line. Exit codes: 0 ok, 2 usage or invalid input, 1 any
// other error; each error is one line on stderr. With --json, stdout carries
// exactly one JSON document.
#pragma once

namespace engram::cli {

int Main(int argc, char** argv);

}  // namespace engram::cli
