#include "chat/contextgrowth.h"

#include <QFileInfo>

#include <waste/waste.hpp>

#include <array>
#include <exception>

ContextGrowth contextGrowthFor(const QString &containerPath, int openContext, int neededTokens)
{
    static constexpr std::array kContexts{4096, 8192, 32768, 131072, 262144, 1048576};
    ContextGrowth g;
    for (const int c : kContexts)
        if (c > openContext && c >= neededTokens) {
            g.tokens = c;
            break;
        }
    if (g.tokens == 0 || containerPath.isEmpty())
        return g;
    try {
        // Reads the manifest only (no weights): quick enough to ask when the warning is shown.
        const std::string path = QFileInfo(containerPath).absoluteFilePath().toStdString();
        const waste::MemoryPlan now = waste::planMemory(path, openContext);
        const waste::MemoryPlan larger = waste::planMemory(path, g.tokens);
        g.extraBytes = larger.floor_bytes - now.floor_bytes;
    } catch (const std::exception &) {
        g.extraBytes = -1; // the context is still worth offering; its cost is not known
    }
    return g;
}
