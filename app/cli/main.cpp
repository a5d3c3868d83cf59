// attnlens-cli: the headless front end. Every subcommand registers itself (see cli_common.h);
// this file only dispatches and turns every failure into "error: ..." with exit status 2.

#include "cli_common.h"
#include "core/io/model_folder.h"
#include "core/util/huge_pages.h"
#include "core/util/parallel.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>

namespace {

void printUsage(std::ostream& out) {
    out << "usage: attnlens-cli <command> [options]\n\ncommands:\n";
    for (const auto& [name, cmd] : cli::registry())
        out << "  " << name << " " << cmd.usage << "\n      " << cmd.summary << "\n";
}

// `attnlens-cli SUB --help`: usage, summary, every option with its description, examples.
void printCommandHelp(const std::string& name, const cli::Command& cmd) {
    std::cout << "usage: attnlens-cli " << name << " " << cmd.usage << "\n\n" << cmd.summary << "\n";
    const cli::CommandHelp& help = cli::commandHelp(name);
    std::cout << "\noptions:\n";
    const auto row = [](const std::string& flag, const std::string& text) {
        constexpr size_t kColumn = 26;
        size_t width = 0; // in characters: UTF-8 continuation bytes take no column ("…")
        for (const unsigned char c : flag)
            width += (c & 0xC0) != 0x80;
        std::cout << "  " << flag;
        if (width + 2 < kColumn)
            std::cout << std::string(kColumn - width - 2, ' ');
        else
            std::cout << "\n" << std::string(kColumn, ' ');
        std::cout << text << "\n";
    };
    for (const cli::OptionHelp& o : help.options)
        row(o.flag, o.text);
    row("--threads N", "threads the engine computes on, 1..1024 (default: this machine's physical cores, "
                       "at most 16; $ATTNLENS_THREADS overrides)");
    row("-h, --help", "this help");
    if (!help.examples.empty()) {
        std::cout << "\nexamples:\n";
        for (const std::string& e : help.examples)
            std::cout << "  " << e << "\n";
    }
}

// Every subcommand's --threads N (or --threads=N), taken out of its arguments: the team size for the
// whole run (core/util/parallel.h); without it, defaultComputeThreads(). Returns false on a bad value.
bool takeThreads(std::vector<std::string>& args, const std::string& command) {
    int threads = attnlens::defaultComputeThreads();
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--") break;
        std::string value;
        size_t taken = 1;
        if (args[i] == "--threads" && i + 1 < args.size()) {
            value = args[i + 1];
            taken = 2;
        } else if (args[i].rfind("--threads=", 0) == 0) {
            value = args[i].substr(10);
        } else if (args[i] == "--threads") {
            value = "";
        } else {
            continue;
        }
        char* end = nullptr;
        const long n = std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || n < 1 || n > 1024) {
            std::cerr << "error: --threads wants a whole number 1..1024, got '" << value
                      << "' (usage: attnlens-cli " << command << " --help)\n";
            return false;
        }
        threads = static_cast<int>(n);
        args.erase(args.begin() + static_cast<long>(i), args.begin() + static_cast<long>(i + taken));
        --i;
    }
    attnlens::setComputeThreads(threads);
    return true;
}

} // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    // 64 MB maps without 16 k page faults each (core/util/huge_pages.h); not for help and version (the
    // re-execution costs a second start, ~0.1-0.3 s here)
    const bool help = std::any_of(args.begin(), args.end(), [](const std::string& a) {
        return a == "--help" || a == "-h" || a == "help" || a == "--version" || a == "-V";
    });
    if (!args.empty() && !help) attnlens::useHugePages(argv);
    attnlens::keepLargeBuffers();
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
            printCommandHelp(it->first, it->second);
            return 0;
        }
    }
    if (!takeThreads(args, it->first)) return 2;
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
