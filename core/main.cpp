#include "core/cli.h"

int main(int argc, char** argv) { return svqa::run_cli(argc, argv, svqa::builtin_registries()); }
