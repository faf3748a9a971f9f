# Install rules, the CMake package config and weft.pc (filled in by the foundation work).
