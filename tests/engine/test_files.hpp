// Test helpers for files: a fresh output folder under the build tree, a whole file as bytes.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

// <build>/test-output/<suite>/<name>, emptied and created.
inline std::string freshOutputDir(const std::string &suite, const std::string &name)
{
    const std::string d = std::string(WASTE_TEST_OUTPUT_DIR) + "/" + suite + "/" + name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

// The file's bytes (empty when it cannot be read).
inline std::string slurp(const std::string &path)
{
    std::ifstream f(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
