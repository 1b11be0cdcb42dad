// The `letitcrash` executable: the command line with the built-in behaviours and checks.

#include "tools/letitcrash/cli.hpp"

int main(int argc, char** argv) { return lic::cli_main(argc, argv); }
