extension Kernel {
    /// The validated module graph the kernel plans by (what ``boot()`` activates from), for the web host's
    /// `/graph` and canvases. Plumbing: a host has the same graph from `ModuleGraph(catalog:host:...)`.
    package var moduleGraph: ModuleGraph { graph }
}
