#include "app/cli/builtin_registries.h"
#include "app/cli/cli.h"

int main(int argc, char** argv) { return svqa::run_cli(argc, argv, svqa::builtin_registries()); }
