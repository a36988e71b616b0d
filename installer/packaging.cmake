# Filled in with the install rules and CPack (DEB + TGZ) configuration.
