// waste-studio: the desktop app. Thin on purpose: everything lives in the wastestudio library.
#include "studioapplication.h"

int main(int argc, char **argv)
{
    return StudioApplication::run(argc, argv);
}
