extension Kernel {
    /// The validated module graph the kernel plans by (what ``boot()`` activates from).
    public var moduleGraph: ModuleGraph { graph }
}
