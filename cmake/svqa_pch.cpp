// Compiles the shared torch precompiled header (cmake/svqa_pch.h); nothing else.
