// attnlens-cli: the headless front end. Every subcommand registers itself (see cli_common.h);
// this file only dispatches and turns every failure into "error: ..." with exit status 2.

#include "cli_common.h"
#include "core/io/model_folder.h"

#include <exception>
#include <iostream>

namespace {

void printUsage(std::ostream& out) {
    out << "usage: attnlens-cli <command> [options]\n\ncommands:\n";
    for (const auto& [name, cmd] : cli::registry())
        out << "  " << name << " " << cmd.usage << "\n      " << cmd.summary << "\n";
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        printUsage(args.empty() ? std::cerr : std::cout);
        return args.empty() ? 2 : 0;
    }
    if (args[0] == "--version" || args[0] == "-V") {
        std::cout << "attnlens-cli " << ATTNLENS_VERSION << "\n";
        try { // where the built-in models are found (the install prefix, the source tree or
              // $ATTNLENS_RESOURCES_DIR)
            std::cout << "resources: " << attnlens::resourcesDir().string() << "\n";
        } catch (const std::exception& e) {
            std::cout << "resources: none (" << e.what() << ")\n";
        }
        return 0;
    }
    const auto it = cli::registry().find(args[0]);
    if (it == cli::registry().end()) {
        std::cerr << "error: unknown command '" << args[0] << "' (try attnlens-cli --help)\n";
        return 2;
    }
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--") break;
        if (args[i] == "--help" || args[i] == "-h") { // every subcommand: its usage on stdout, exit 0
            std::cout << "usage: attnlens-cli " << it->first << " " << it->second.usage << "\n\n"
                      << it->second.summary << "\n";
            return 0;
        }
    }
    try {
        return it->second.run({args.begin() + 1, args.end()});
    } catch (const cli::UsageError& e) {
        std::cerr << "error: " << e.what() << " (usage: attnlens-cli " << it->first << " " << it->second.usage
                  << ")\n";
        return 2;
    } catch (const std::bad_alloc&) {
        std::cerr << "error: out of memory\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }
}
