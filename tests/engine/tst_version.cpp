#include <gtest/gtest.h>

#include "waste/waste.hpp"

TEST(Version, BuildInfoNamesContainerFormat)
{
    const std::string info = waste::buildInfo();
    EXPECT_NE(info.find("container v0"), std::string::npos) << info;
    EXPECT_NE(info.find(waste::kVersion), std::string::npos) << info;
}
